<?php

namespace Html2Text;

final class Chars
{
    public static function convert(string $html): string
    {
        return str_replace('&nbsp;', ' ', $html);
    }
}
