<?php
// Without `composer install` there is no vendor/autoload.php: load the
// sources directly so the system phpunit runs the tests.
if (file_exists(__DIR__ . '/../vendor/autoload.php')) {
    require __DIR__ . '/../vendor/autoload.php';
} else {
    require __DIR__ . '/../src/Temperature.php';
}
