/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "authz-ptrace.h"

bool authz_may_profile(uid_t caller, const ProcInfo *target)
{
        if (caller == 0)
                return true;
        return target->uid[0] == caller && target->uid[1] == caller && target->uid[2] == caller &&
               target->dumpable;
}
