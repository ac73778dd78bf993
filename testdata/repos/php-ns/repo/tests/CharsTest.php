<?php

namespace Html2Text;

use PHPUnit\Framework\TestCase;

final class CharsTest extends TestCase
{
    public function testNbsp(): void
    {
        $this->assertSame('a b', Chars::convert('a&nbsp;b'));
    }
}
