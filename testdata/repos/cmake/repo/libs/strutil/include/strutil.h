#pragma once
#include <string>

// repeat returns s written n times.
std::string repeat(const std::string &s, int n);

// upper returns s in ASCII upper case.
std::string upper(const std::string &s);
