#include "check.h"
#include "strutil.h"

int main() {
    CHECK(upper("abc") == "ABC");
    CHECK(upper("a1!") == "A1!");
    return failures();
}
