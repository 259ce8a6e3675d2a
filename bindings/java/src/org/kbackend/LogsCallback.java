package org.kbackend;

import java.util.Map;

/** Called by Model.fit (with FitOptions) after each batch (batch &gt;= 0) and each epoch
 * (batch == -1) with Keras' logs so far as values ("loss", the metrics, "val_loss" at an epoch's
 * end); returning true stops training. It may use the model (save it, read its weights). What
 * it throws stops training and comes out of fit unchanged. */
@FunctionalInterface
public interface LogsCallback {
  /** Returns true to stop training.
   * @param epoch the epoch, from 0
   * @param batch the batch within the epoch, or -1 at the epoch's end
   * @param logs the logs by Keras' names
   * @return whether to stop training */
  boolean onBatch(long epoch, long batch, Map<String, Double> logs);
}
