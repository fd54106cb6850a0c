// phase estimation of p(pi/4) (eigenstate |1>) with 3 counting qubits and controlled-phase powers
OPENQASM 3.0;
include "stdgates.inc";
qubit[4] q;
x q[3];
h q[0];
h q[1];
h q[2];
cp(pi/4) q[0], q[3];
cp(pi/2) q[1], q[3];
cp(pi) q[2], q[3];
swap q[0], q[2];
h q[0];
cp(-pi/2) q[1], q[0];
h q[1];
cp(-pi/4) q[2], q[0];
cp(-pi/2) q[2], q[1];
h q[2];
