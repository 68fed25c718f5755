// The page: one WebSocket to the server that served it, speaking the same
// protocol as bots and the terminal client. Its state is in page.js (the
// picture of the game folded by state.js, said in words.js); render.js draws
// it (text only: names are never markup), controls.js wires what the user
// does, socket.js keeps the connection (reconnecting), messages.js acts on
// what the server says (resuming the tab's seat after a reload) and saved.js
// keeps what the browser holds between loads.
import { wire } from './controls.js';
import { handle } from './messages.js';
import { route } from './render.js';
import { connect } from './socket.js';

wire();
connect(handle);
route();
