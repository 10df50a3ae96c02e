exports.greeting = 'hello from the private registry';
