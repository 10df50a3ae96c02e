export { LocalNetnsBackend, type LocalNetnsBackendOptions } from './local-netns-backend.js';
export { INSTANCE_PORT } from './local-instance.js';
