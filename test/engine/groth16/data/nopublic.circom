pragma circom 2.0.0;

// Knowledge of x with x^10 = 59049, nothing public: the verifying key's IC
// is the single point IC[0] and public.json is empty.
template TenthRoot() {
    signal input x;

    signal pow[10];
    pow[0] <== x;
    for (var i = 1; i < 10; i++) {
        pow[i] <== pow[i - 1] * x;
    }
    pow[9] === 59049;
}

component main = TenthRoot();
