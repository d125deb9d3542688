/**
 * bin/tscryptfs's entry: the background process of a mount goes straight
 * to its own module (daemon.ts, bundled into one file by the build:
 * daemon-module.ts), without the command line's modules; every other
 * start is the command (main.ts).
 */
import { switchValue } from '../util/switches.js';

type DaemonModule = typeof import('./daemon.js');

if (switchValue('TSCRYPTFS_DAEMON_CHILD') === '1') {
  void import('./daemon-module.js')
    .then((m) => import(m.daemonModuleUrl()) as Promise<DaemonModule>)
    .then((d) => d.runDaemonChild());
} else void import('./main.js').then((m) => m.run());
