// The one table from a family id to its checks (harness/families.def).
#include "family_checks.hpp"

namespace harness::detail {

#define FAMILY(ID) const FamilyChecks& ID##_checks();
#include "harness/families.def"
#undef FAMILY

const FamilyChecks& checks_of(const Exercise& exercise)
{
    static const FamilyChecks* const checks[] = {
#define FAMILY(ID) &ID##_checks(),
#include "harness/families.def"
#undef FAMILY
    };
    return *checks[static_cast<int>(exercise.family)];
}

}  // namespace harness::detail
