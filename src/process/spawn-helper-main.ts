/** Entry point of the spawn helper process (spawn-helper.ts): started by HelperLauncher, never by hand. */
import { serveLaunches } from './spawn-helper.js';

serveLaunches();
