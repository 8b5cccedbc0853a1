#include "HearthUnitABI.h"

uint32_t hearth_unit_abi_version(void) { return HEARTH_UNIT_ABI_VERSION; }
