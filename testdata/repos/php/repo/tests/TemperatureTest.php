<?php

use Example\Temperature;
use PHPUnit\Framework\TestCase;

final class TemperatureTest extends TestCase
{
    public function testBoilingInFahrenheit(): void
    {
        $this->assertEqualsWithDelta(212.0, Temperature::toFahrenheit(100), 0.001);
    }

    public function testFreezingInFahrenheit(): void
    {
        $this->assertEqualsWithDelta(32.0, Temperature::toFahrenheit(0), 0.001);
    }
}
