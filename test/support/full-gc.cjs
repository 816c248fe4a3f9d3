// Loaded into a started service with NODE_OPTIONS=--require by tests whose subject must outlive garbage collection (the
// bundle's source map, which Node holds only as long as a module holds it): a full collection each time the test sends
// SIGUSR2, and a line on stderr when it is done. On a timer it had also run through the start, which it slowed past
// the 20 s a test waits for health on a busy CI machine.
require('node:v8').setFlagsFromString('--expose-gc');
const collect = require('node:vm').runInNewContext('gc');
process.on('SIGUSR2', () => {
  collect();
  process.stderr.write('full-gc: collected\n');
});
