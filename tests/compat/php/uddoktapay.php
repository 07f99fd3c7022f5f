<?php
// A UddoktaPay client as the WHMCS/WooCommerce modules are: checkout-v2, verify-payment, refund-payment,
// and their IPN handler (run under `php -S`). Usage: php uddoktapay.php create|verify|refund BASE KEY ARG...
require __DIR__ . '/common.php';

const HEADER = 'RT-UDDOKTAPAY-API-KEY';

function api_url(string $base, string $path): string
{
    // The modules take an "API URL" ending in /api/checkout-v2 and swap its last part.
    return preg_replace('#/api/checkout-v2$#', '', rtrim($base, '/')) . '/api/' . $path;
}

if (PHP_SAPI === 'cli-server') {
    $headers = ipn_headers();
    $key = getenv('PLUGIN_KEY');
    if (!isset($headers[HEADER]) || !hash_equals($key, $headers[HEADER])) {
        log_ipn(['ok' => false, 'why' => 'header', 'names' => array_keys($headers)]);
        http_response_code(403);
        exit;
    }
    $ipn = json_decode(file_get_contents('php://input'), true);
    $check = post_json(api_url(getenv('PLUGIN_BASE'), 'verify-payment'), ['invoice_id' => $ipn['invoice_id']], [HEADER . ': ' . $key]);
    $ok = $check['body']['status'] === 'COMPLETED' && $check['body']['amount'] === getenv('ORDER_AMOUNT');
    log_ipn(['ok' => $ok, 'ipn' => $ipn, 'verified' => $check['body'], 'invoice' => $ipn['metadata']['invoice_id'] ?? null]);
    echo $ok ? 'OK' : 'MISMATCH';
    exit;
}

[$script, $command, $base, $key] = array_slice($argv, 0, 4);
$auth = [HEADER . ': ' . $key];
if ($command === 'create') {
    answer(post_json(rtrim($base, '/'), [
        'full_name' => 'Karim Mia',
        'email' => 'karim@example.com',
        'amount' => $argv[5],
        'metadata' => ['invoice_id' => '77', 'user_id' => 5],
        'redirect_url' => 'https://shop.example/viewinvoice.php?id=77',
        'cancel_url' => 'https://shop.example/viewinvoice.php?id=77&cancel=1',
        'webhook_url' => $argv[4],
        'return_type' => 'GET',
    ], $auth));
} elseif ($command === 'verify') {
    answer(post_json(api_url($base, 'verify-payment'), ['invoice_id' => $argv[4]], $auth));
} elseif ($command === 'refund') {
    answer(post_json(api_url($base, 'refund-payment'), [
        'transaction_id' => $argv[4], 'payment_method' => 'bkash', 'amount' => $argv[5],
        'product_name' => 'Hosting', 'reason' => 'Customer asked',
    ], $auth));
}
