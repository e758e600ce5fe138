function r = rand(varargin)
  % Replays the initial factors queued by crosscheck_case.m instead of drawing random numbers, so that
  % a multi-start run of the reference code starts from exactly the factors our estimator is given.
  % Only on the path during a "multistart" case. A call whose size differs from the next queued matrix,
  % or a call after the queue ran out, is an error (the reference code drew in an unexpected order).
  global CROSSCHECK_QUEUE
  if isempty(CROSSCHECK_QUEUE)
    error("crosscheck rand replay: rand(%s) called but no queued matrix is left", ...
          num2str(cell2mat(varargin)));
  end
  r = CROSSCHECK_QUEUE{1};
  CROSSCHECK_QUEUE(1) = [];
  want = cell2mat(varargin);
  if numel(want) == 1
    want = [want want];
  end
  if ~isequal(size(r), want)
    error("crosscheck rand replay: rand(%s) called, next queued matrix is %dx%d", ...
          num2str(want), rows(r), columns(r));
  end
end
