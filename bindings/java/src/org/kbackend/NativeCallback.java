package org.kbackend;

/** What the C trampoline of map_fn / foldl / foldr / rnn calls: borrowed tensor pointers in, new
 * references out. K adapts lambdas to it; user code never implements it. */
@FunctionalInterface
interface NativeCallback {
  long[] invoke(long[] tensors);
}
