function idx = randsample(n, k)
  % Stand-in for the Statistics Toolbox's randsample(n, k), which core Octave lacks: k distinct integers
  % drawn uniformly from 1..n, as a column. Only constructW (heat kernel, more than 3000 samples) and
  % litekmeans call it; the cross-check's cases never reach those branches, but the path must resolve.
  if k > n
    error("randsample: cannot draw %d distinct values from 1..%d", k, n);
  end
  order = randperm(n);
  idx = order(1:k)(:);
end
