// `npm run db`: the embedded MongoDB stand-in alone, in the foreground, for a second server process
// or a shell to share (MONGODB_URI=<printed uri> npm start).
import { loadConfig } from '../config.js';
import { defaultDatabaseName } from './connect.js';
import { startStandIn } from './standIn.js';

const standIn = await startStandIn({ port: loadConfig().mongoStandInPort, log: (line) => console.log(line) });
console.log(`MONGODB_URI=${standIn.uri}/${defaultDatabaseName}`);
console.log('In-memory MongoDB stand-in running; data is lost when it stops. Ctrl+C to stop.');
const stop = () => void standIn.stop().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
