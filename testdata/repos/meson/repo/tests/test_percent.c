#include "bounds.h"
#include "check.h"

int main(void) {
    CHECK(percent(3, 3) == 100);
    CHECK(percent(0, 7) == 0);
    return failures != 0;
}
