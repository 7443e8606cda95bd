pragma circom 2.0.0;

// Bit decompositions: out = x AND y over N bits, x private, y a public
// input. Each bit is constrained to 0 or 1 and the bits to sum to their
// number, so most of the witness is 0 or 1; the AND bits appear in the C
// matrix only, so their A and B points are the point at infinity.
template ToBits(N) {
    signal input in;
    signal output bit[N];

    var sum = 0;
    var weight = 1;
    for (var i = 0; i < N; i++) {
        bit[i] <-- (in >> i) & 1;
        bit[i] * (bit[i] - 1) === 0;
        sum += bit[i] * weight;
        weight += weight;
    }
    sum === in;
}

template BitwiseAnd(N) {
    signal input x;
    signal input y;
    signal output out;

    component xb = ToBits(N);
    component yb = ToBits(N);
    xb.in <== x;
    yb.in <== y;

    signal both[N];
    var sum = 0;
    var weight = 1;
    for (var i = 0; i < N; i++) {
        both[i] <== xb.bit[i] * yb.bit[i];
        sum += both[i] * weight;
        weight += weight;
    }
    out <== sum;
}

component main {public [y]} = BitwiseAnd(32);
