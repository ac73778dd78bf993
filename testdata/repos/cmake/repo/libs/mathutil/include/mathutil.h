#pragma once

// gcd returns the greatest common divisor of two non-negative numbers.
int gcd(int a, int b);
