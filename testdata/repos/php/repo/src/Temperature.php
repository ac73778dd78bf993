<?php

namespace Example;

final class Temperature
{
    /** Converts degrees Celsius to Fahrenheit. */
    public static function toFahrenheit(float $celsius): float
    {
        return $celsius * 9 / 5 + 32;
    }

    /** Converts degrees Fahrenheit to Celsius. */
    public static function toCelsius(float $fahrenheit): float
    {
        return $fahrenheit - 32 * 5 / 9;
    }
}
