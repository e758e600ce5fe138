function crosscheck_case(infile, outfile, replaydir)
  % One case of the cross-check (tools/crosscheck): read the inputs written by Python, run the reference
  % function the case names, write its outputs for Python to read.
  %   kind "gnmf"       [U, V, nIter, obj] = GNMF(X, k, W, options, U0, V0)
  %   kind "gnmf_kl"    same with GNMF_KL
  %   kind "lccf"       same with LCCF (X is features x samples; W the sample graph)
  %   kind "graph"      W = constructW(X', graph_options), returned dense
  %   kind "metrics"    AC (bestMap + hungarian) and NMI (MutualInfo) of each row of labels against gnd
  %   kind "multistart" GNMF without initial factors, its rand calls answered from starts_U / starts_V,
  %                     then every start alone for the selection phase, to name the start it kept
  c = load(infile);
  out = struct();
  if isfield(c, "graph_options")  % the sample graph, built by the reference code itself
    opts = c.graph_options;
    if isfield(opts, "semiSplit")
      opts.semiSplit = logical(opts.semiSplit(:));
      opts.gnd = opts.gnd(:);
    end
    c.W = constructW(c.X', opts);
  end
  switch c.kind
    case "gnmf"
      [out.U, out.V, out.nIter, out.obj] = GNMF(c.X, c.k, c.W, c.options, c.U0, c.V0);
    case "gnmf_kl"
      [out.U, out.V, out.nIter, out.obj] = GNMF_KL(c.X, c.k, c.W, c.options, c.U0, c.V0);
    case "lccf"
      [out.U, out.V, out.nIter, out.obj] = LCCF(c.X, c.k, c.W, c.options, c.U0, c.V0);
    case "graph"
      out.W = full(c.W);
    case "metrics"
      nrun = rows(c.labels);
      out.ac = zeros(nrun, 1);
      out.nmi = zeros(nrun, 1);
      gnd = c.gnd(:);
      for r = 1:nrun
        labels = c.labels(r, :)(:);
        mapped = bestMap(gnd, labels);
        out.ac(r) = mean(gnd == mapped);
        out.nmi(r) = MutualInfo(gnd, labels);
      end
    case "multistart"
      out = multistart(c, replaydir);
    otherwise
      error("crosscheck_case: unknown kind %s", c.kind);
  end
  save("-mat7-binary", outfile, "-struct", "out");
end

function out = multistart(c, replaydir)
  global CROSSCHECK_QUEUE
  nstart = size(c.starts_U, 3);
  CROSSCHECK_QUEUE = {};
  for s = 1:nstart  % GNMF_Multi draws U then V for each start
    CROSSCHECK_QUEUE{end + 1} = c.starts_U(:, :, s);
    CROSSCHECK_QUEUE{end + 1} = c.starts_V(:, :, s);
  end
  warning("off", "Octave:shadowed-function");
  addpath(replaydir);
  unwind_protect
    [out.U, out.V, out.nIter, out.obj] = GNMF(c.X, c.k, c.W, c.options);
  unwind_protect_cleanup
    rmpath(replaydir);
  end_unwind_protect
  if ~isempty(CROSSCHECK_QUEUE)
    error("crosscheck multistart: %d queued matrices were not drawn", numel(CROSSCHECK_QUEUE));
  end
  % the selection phase alone, start by start: minIter iterations from each start, objective after them
  single = c.options;
  single.nRepeat = 1;
  single.maxIter = c.options.minIter;
  single.Converge = 1;
  out.start_obj = zeros(nstart, 1);
  for s = 1:nstart
    [~, ~, ~, obj] = GNMF(c.X, c.k, c.W, single, c.starts_U(:, :, s), c.starts_V(:, :, s));
    out.start_obj(s) = obj(end);
  end
  best = 1;  % GNMF_Multi keeps a later start only if its objective is strictly lower
  for s = 2:nstart
    if out.start_obj(s) < out.start_obj(best)
      best = s;
    end
  end
  out.chosen = best;
end
