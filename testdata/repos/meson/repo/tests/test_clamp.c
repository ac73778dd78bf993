#include "bounds.h"
#include "check.h"

int main(void) {
    CHECK(clamp(5, 0, 10) == 5);
    CHECK(clamp(-3, 0, 10) == 0);
    CHECK(clamp(12, 0, 10) == 10);
    return failures != 0;
}
