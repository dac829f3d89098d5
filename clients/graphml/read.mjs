// Reads a GraphML document from standard input with graphology-graphml, an independent
// GraphML parser, and prints what it understood as JSON: the graph's nodes and edges with
// their attributes, typed as the document's <key> declarations say.
import { readFileSync } from 'node:fs';
import Graph from 'graphology';
import { parse } from 'graphology-graphml';

const text = readFileSync(0, 'utf8');
const graph = parse(Graph, text);
const nodes = graph.mapNodes((key, attributes) => ({ key, attributes }));
const edges = graph.mapEdges((key, attributes, source, target) => ({ key, source, target, attributes }));
process.stdout.write(JSON.stringify({ type: graph.type, nodes, edges }));
