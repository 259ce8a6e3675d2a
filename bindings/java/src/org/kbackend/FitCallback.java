package org.kbackend;

/** Called by Model.fit after each batch (batch &gt;= 0) and each epoch (batch == -1) with the
 * values so far as JSON ({"loss": ..., "acc": ...}); returning true stops training. What it
 * throws stops training and comes out of fit unchanged. */
@FunctionalInterface
public interface FitCallback {
  /** Returns true to stop training.
   * @param epoch the epoch, from 0
   * @param batch the batch within the epoch, or -1 at the epoch's end
   * @param logsJson the metrics so far as JSON
   * @return whether to stop training */
  boolean onBatch(long epoch, long batch, String logsJson);
}
