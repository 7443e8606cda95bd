pragma circom 2.0.0;

// out = x * y[0] * ... * y[N-1]: x is a public input, out the public output,
// y private; one product per constraint, so N + 2 public rows give a domain
// of 16 points for N = 12.
template ProductChain(N) {
    signal input x;
    signal input y[N];
    signal output out;

    signal acc[N + 1];
    acc[0] <== x;
    for (var i = 0; i < N; i++) {
        acc[i + 1] <== acc[i] * y[i];
    }
    out <== acc[N];
}

component main {public [x]} = ProductChain(12);
