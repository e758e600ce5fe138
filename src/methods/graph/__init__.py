"""The graph machinery of the geometry-aware methods: kNN graphs, NN-descent above 30,000 samples, label matrices."""
