"""What every factorization shares: input checks, the estimator base, the loop, products, the guarded multiply.

``validation`` (parameter rules, data and label checks), ``estimator`` (the scikit-learn base class every
factorization extends, and the mixins the methods share), ``loop`` (initialize, update, track the objective,
stop: Deng Cai's protocol), ``multiplicative`` (the guarded in-place multiply), ``products`` (the matrix
products, blocked and batched), ``frobenius`` (the Frobenius objective, U-rule and NMF's rules),
``new_samples`` (what ``transform`` solves) and ``fixed_basis`` (a new sample's coefficients for a learned
basis).
"""
