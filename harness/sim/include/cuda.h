// Provided by the CPU simulator.
#pragma once
#include "cudasim/runtime.h"
