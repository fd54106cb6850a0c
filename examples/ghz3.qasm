// A 3-qubit GHZ state: the README's QuEst prediction example (workbench run quest --mode predict --qasm examples/ghz3.qasm ...)
OPENQASM 2.0;
include "qelib1.inc";
qreg q[3];
h q[0];
cx q[0], q[1];
cx q[1], q[2];
