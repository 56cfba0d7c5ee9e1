/**
 * Every app's first import: on a Node older than the supported one, one line and exit 1, before anything else loads
 * (a dependency that needs the newer Node would otherwise fail first, with a stack instead of a reason).
 */
import { exitOnUnsupportedNode } from './supported-node';

exitOnUnsupportedNode();
