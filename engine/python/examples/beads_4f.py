"""4f imaging of beads: Airy's "imaging" preset (a 4f microscope, 60 random
beads, the sensor summing over z), run in-process, saved and shown.

    python3 engine/python/examples/beads_4f.py [out.tif]
"""
import sys

import numpy as np
import airy

system = airy.System.preset("imaging")
print(system.to_dict()["description"])
result = system.run()
image = result.intensity[0]          # (y, x), float32, the engine's memory
print("image %s, spacing %.3f µm, mean %.4g, max %.4g"
      % (image.shape, result.spacing[2], float(np.mean(image)), float(image.max())))
if len(sys.argv) > 1:
    result.save(sys.argv[1])         # TIFF/OME-TIFF/PNG by the name
    print("wrote", sys.argv[1])
