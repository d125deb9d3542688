/**
 * bin/tscryptfs's entry: the background process of a mount goes straight
 * to its own module (daemon.ts), without the command line's modules; every
 * other start is the command (main.ts).
 */
import { switchValue } from '../util/switches.js';

if (switchValue('TSCRYPTFS_DAEMON_CHILD') === '1') void import('./daemon.js').then((d) => d.runDaemonChild());
else void import('./main.js').then((m) => m.run());
