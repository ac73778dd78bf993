<?php

require __DIR__ . '/../src/Chars.php';
