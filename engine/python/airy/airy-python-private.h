/* Between the parts of airy._airy: airy-python.c (systems, runs, stacks)
 * and airy-python-grad.c (the gradient and the optimizer). */
#pragma once

#include <Python.h>

#include "airy.h"

/* the engine's error as the Python exception it means (steals error) */
PyObject *_airy_py_raise       (GError     *error,
                                const char *path);
/* a Stack over the engine's stack (steals result, or stack when result is NULL) */
PyObject *_airy_py_stack_wrap  (AiryResult *result,
                                AiryStack  *stack);
PyObject *_airy_py_grad        (PyObject   *module,
                                PyObject   *args);
PyObject *_airy_py_optimize    (PyObject   *module,
                                PyObject   *args);
