"""One model of each keras.applications family for make_layer_cases.py: weights=None, two
classes as logits, no dropout, on the smallest images each family takes. Those that rescale
pixels themselves (include_preprocessing) take pixels in [0, 255]; the others inputs in
[-1, 1], as their preprocess_input would give."""
import keras

A = keras.applications


def efficientnet_b0():
    """EfficientNetB0 without its dropout (its constructor fixes the rates)."""
    from keras.src.applications.efficientnet import EfficientNet
    return EfficientNet(1.0, 1.0, 224, dropout_rate=0.0, drop_connect_rate=0.0, weights=None,
                        input_shape=(32, 32, 3), classes=2, classifier_activation=None,
                        name="efficientnetb0")


def efficientnet_v2_b0():
    """EfficientNetV2B0 without its dropout (its constructor fixes the rates)."""
    from keras.src.applications.efficientnet_v2 import EfficientNetV2
    return EfficientNetV2(1.0, 1.0, 224, dropout_rate=0.0, drop_connect_rate=0.0, weights=None,
                          input_shape=(32, 32, 3), classes=2, classifier_activation=None,
                          name="efficientnetv2-b0")


def small(cls, side=32, **kwargs):
    return lambda: cls(input_shape=(side, side, 3), weights=None, classes=2,
                       classifier_activation=None, **kwargs)


# name -> (make, takes pixels)
APPLICATIONS = {
    "EfficientNetB0": (efficientnet_b0, True),
    "EfficientNetV2B0": (efficientnet_v2_b0, True),
    "MobileNetV3Small": (small(A.MobileNetV3Small, dropout_rate=0.0), True),
    "ConvNeXtTiny": (small(A.ConvNeXtTiny), True),
    "DenseNet121": (small(A.DenseNet121), False),
    "InceptionResNetV2": (small(A.InceptionResNetV2, 75), False),
    "InceptionV3": (small(A.InceptionV3, 75), False),
    "MobileNet": (small(A.MobileNet, alpha=0.25, dropout=0.0), False),
    "MobileNetV2": (small(A.MobileNetV2, alpha=0.35), False),
    "NASNetMobile": (small(A.NASNetMobile), False),
    "ResNet50": (small(A.ResNet50), False),
    "ResNet50V2": (small(A.ResNet50V2), False),
    "VGG16": (small(A.VGG16), False),
    "Xception": (small(A.Xception, 71), False),
}
