// Loaded into a started service with NODE_OPTIONS=--require by tests whose subject must outlive garbage collection (the
// bundle's source map, which Node holds only as long as a module holds it): a full collection every 100 ms.
const { setInterval } = require('node:timers');

require('node:v8').setFlagsFromString('--expose-gc');
const collect = require('node:vm').runInNewContext('gc');
setInterval(() => collect(), 100).unref();
