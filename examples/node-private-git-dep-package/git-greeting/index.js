exports.greeting = 'hello over ssh from a private repository';
