// inverse QFT on 4 qubits applied to the Fourier state of |0101> (prepared with h and phase gates), no swaps
OPENQASM 3.0;
include "stdgates.inc";
qubit[4] q;
h q;
p(5*pi/8) q[0];
p(5*pi/4) q[1];
p(pi/2) q[2];
p(pi) q[3];
h q[3];
cp(-pi/2) q[3], q[2];
cp(-pi/4) q[3], q[1];
cp(-pi/8) q[3], q[0];
h q[2];
cp(-pi/2) q[2], q[1];
cp(-pi/4) q[2], q[0];
h q[1];
cp(-pi/2) q[1], q[0];
h q[0];
