"""What every factorization shares: input checks, the estimator base, the loop, products, the guarded multiply.

``estimator`` (the scikit-learn base class every method extends), ``loop`` (initialize, update, track the
objective, stop: Deng Cai's protocol), ``multiplicative`` (the guarded in-place multiply), ``products``
(the matrix products, blocked and batched), ``frobenius`` (the Frobenius objective and U-rule) and
``fixed_basis`` (a new sample's coefficients for a learned basis).
"""
