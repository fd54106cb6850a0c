// a ring of controlled-phase gates between Hadamard layers (a QFT-like phase pattern, not a QFT)
OPENQASM 3.0;
include "stdgates.inc";
qubit[4] q;
h q;
cp(pi/3) q[0], q[1];
cp(pi/3) q[1], q[2];
cp(pi/3) q[2], q[3];
cp(pi/3) q[3], q[0];
h q;
cp(pi/5) q[0], q[2];
cp(pi/5) q[1], q[3];
h q;
