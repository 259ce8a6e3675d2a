"""The bases of kbackend.callbacks: Callback, whose subclasses fit calls back in Python with
Keras' hooks, NativeCallback, the Keras callbacks the library runs itself, and Keras'
LearningRateScheduler (a Python function)."""
import numbers

__all__ = ["Callback", "NativeCallback", "LearningRateScheduler"]


class Callback:
    """A callback of the program's own, as Keras' keras.callbacks.Callback: fit sets .model and
    calls on_train_begin, on_epoch_begin(epoch), on_train_batch_end(batch, logs) (the batch's
    values with its index and size), on_epoch_end(epoch, logs) (the epoch's, val_ ones and
    what the library's callbacks added included) and on_train_end; setting
    self.model.stop_training = True stops training after the batch or epoch."""

    def __init__(self):
        self.model = None
        self.params = {}

    def set_model(self, model):
        """The model fit trains (fit sets it)."""
        self.model = model

    def set_params(self, params):
        """fit's parameters: epochs and verbose."""
        self.params = params

    def on_train_begin(self, logs=None):
        """Before the first epoch."""
        pass

    def on_train_end(self, logs=None):
        """After the last epoch."""
        pass

    def on_epoch_begin(self, epoch, logs=None):
        """Before epoch `epoch` (from 0)."""
        pass

    def on_epoch_end(self, epoch, logs=None):
        """After epoch `epoch`: logs has its values, val_ ones included."""
        pass

    def on_train_batch_end(self, batch, logs=None):
        """After a training batch: logs has its values, index and size; calls on_batch_end."""
        self.on_batch_end(batch, logs)

    def on_batch_end(self, batch, logs=None):
        """After a training batch (Keras 2's name)."""
        pass


class NativeCallback(Callback):
    """One of Keras' callbacks that the library runs (fit's `callbacks` option): its class name
    and arguments, as get_config gives them."""

    class_name = None

    def __init__(self, **config):
        super().__init__()
        self._config = config

    def get_config(self):
        """The arguments given, None ones left out (Keras' None)."""
        return {k: v for k, v in self._config.items() if v is not None}

    def spec(self):
        """{class_name, config}: the entry of fit's callbacks option."""
        return {"class_name": self.class_name, "config": self.get_config()}

    def __getattr__(self, name):
        config = self.__dict__.get("_config", {})
        if name in config:
            return config[name]
        raise AttributeError(name)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._config.items())
        return f"{self.class_name}({args})"


class LearningRateScheduler(Callback):
    """Keras' LearningRateScheduler: before each epoch the learning rate becomes
    schedule(epoch, rate) (or schedule(epoch), Keras' older form), a float; each epoch's logs
    and the history get the rate (learning_rate)."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        try:
            rate = self.schedule(epoch, float(optimizer.learning_rate))
        except TypeError:  # Keras' older form
            rate = self.schedule(epoch)
        if not isinstance(rate, numbers.Real) or isinstance(rate, bool):
            raise ValueError("The output of the `schedule` function should be a float. "
                             f"Got: {rate}")
        optimizer.learning_rate = float(rate)
        if self.verbose > 0:
            print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to "
                  f"{float(rate)}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(self.model.optimizer.learning_rate)
