#include <kernelc.h>

