# An inference script in the light runtime's pattern (rknn-toolkit-lite2's examples): unchanged user
# code. Usage: python infer.py MODEL.rknn IMAGE.npy  (a uint8 HxWx3 picture; prints the top-5)
import sys

import numpy as np
from rknnlite.api import RKNNLite


def show_top5(result):
    output = result[0].reshape(-1)
    output_sorted_indices = np.argsort(output)[::-1][:5]
    top5_str = "-----TOP 5-----\n"
    for i, index in enumerate(output_sorted_indices):
        value = output[index]
        if value > 0:
            topi = "[{:>3d}] score:{:.6f} class:{}\n".format(index, value, index)
        else:
            topi = "-1: 0.0\n"
        top5_str += topi
    print(top5_str)


if __name__ == "__main__":
    rknn_model = sys.argv[1]
    rknn_lite = RKNNLite()

    # Load RKNN model
    print("--> Load RKNN model")
    ret = rknn_lite.load_rknn(rknn_model)
    if ret != 0:
        print("Load RKNN model failed")
        exit(ret)
    print("done")

    img = np.load(sys.argv[2])
    img = np.expand_dims(img, 0)

    # Init runtime environment
    print("--> Init runtime environment")
    ret = rknn_lite.init_runtime(core_mask=RKNNLite.NPU_CORE_0)
    if ret != 0:
        print("Init runtime environment failed")
        exit(ret)
    print("done")

    # Inference
    print("--> Running model")
    outputs = rknn_lite.inference(inputs=[img])

    # Show the classification results
    show_top5(outputs)
    print("done")

    rknn_lite.release()
