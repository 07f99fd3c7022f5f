<?php
// A PipraPay 3.x client as the Paymenter/Laravel packages are: base ending in /api, checkout/redirect,
// verify-payment, refund-payment, and their IPN handler (run under `php -S`).
// Usage: php piprapay3.php create|verify|refund BASE KEY ARG...
require __DIR__ . '/common.php';

const HEADER = 'MHS-PIPRAPAY-API-KEY';

if (PHP_SAPI === 'cli-server') {
    $headers = ipn_headers();
    $key = getenv('PLUGIN_KEY');
    if (!isset($headers[HEADER]) || $headers[HEADER] !== $key) {
        log_ipn(['ok' => false, 'why' => 'header', 'names' => array_keys($headers)]);
        http_response_code(403);
        exit;
    }
    $ipn = json_decode(file_get_contents('php://input'), true);
    $check = post_json(rtrim(getenv('PLUGIN_BASE'), '/') . '/verify-payment', ['pp_id' => $ipn['pp_id']], [HEADER . ': ' . $key]);
    $ok = $check['body']['status'] === 'completed' && $check['body']['amount'] === getenv('ORDER_AMOUNT');
    log_ipn(['ok' => $ok, 'ipn' => $ipn, 'verified' => $check['body'], 'invoice' => $ipn['metadata']['invoiceid'] ?? null]);
    echo $ok ? 'OK' : 'MISMATCH';
    exit;
}

[$script, $command, $base, $key] = array_slice($argv, 0, 4);
$auth = [HEADER . ': ' . $key];
$base = rtrim($base, '/');
if ($command === 'create') {
    answer(post_json($base . '/checkout/redirect', [
        'full_name' => 'Karim Mia',
        'email_address' => 'karim@example.com',
        'mobile_number' => '01712345678',
        'amount' => $argv[5],
        'currency' => 'BDT',
        'return_url' => 'https://panel.example/invoices/99',
        'webhook_url' => $argv[4],
        'metadata' => json_encode(['invoiceid' => '99']),
        'return_type' => 'GET',
    ], $auth));
} elseif ($command === 'verify') {
    answer(post_json($base . '/verify-payment', ['pp_id' => $argv[4]], $auth));
} elseif ($command === 'refund') {
    answer(post_json($base . '/refund-payment', ['pp_id' => $argv[4]], $auth));
}
