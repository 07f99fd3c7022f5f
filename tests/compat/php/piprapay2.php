<?php
// A PipraPay 2.x client as the FOSSBilling/Blesta/WISECP modules are: create-charge, verify-payments,
// and their IPN handler (run under `php -S`). Usage: php piprapay2.php create|verify BASE KEY ARG...
require __DIR__ . '/common.php';

const HEADER = 'mh-piprapay-api-key';

if (PHP_SAPI === 'cli-server') {
    $headers = ipn_headers();
    $key = getenv('PLUGIN_KEY');
    if (!isset($headers[HEADER]) || $headers[HEADER] !== $key) {
        log_ipn(['ok' => false, 'why' => 'header', 'names' => array_keys($headers)]);
        http_response_code(403);
        exit;
    }
    $ipn = json_decode(file_get_contents('php://input'), true);
    $check = post_json(rtrim(getenv('PLUGIN_BASE'), '/') . '/api/verify-payments', ['pp_id' => $ipn['pp_id']], [HEADER . ': ' . $key]);
    $ok = $check['body']['status'] === 'completed' && $check['body']['amount'] === getenv('ORDER_AMOUNT');
    log_ipn(['ok' => $ok, 'ipn' => $ipn, 'verified' => $check['body'], 'invoice' => $ipn['metadata']['invoiceid'] ?? null]);
    echo $ok ? 'OK' : 'MISMATCH';
    exit;
}

[$script, $command, $base, $key] = array_slice($argv, 0, 4);
$auth = [HEADER . ': ' . $key];
if ($command === 'create') {
    answer(post_json(rtrim($base, '/') . '/api/create-charge', [
        'full_name' => 'Karim Mia',
        'email_mobile' => '01712345678',
        'amount' => (float) $argv[5],
        'metadata' => ['invoiceid' => '88'],
        'redirect_url' => 'https://billing.example/invoice/88',
        'cancel_url' => 'https://billing.example/invoice/88',
        'webhook_url' => $argv[4],
        'return_type' => 'GET',
        'currency' => 'BDT',
        'product_name' => 'VPS',
    ], $auth));
} elseif ($command === 'verify') {
    answer(post_json(rtrim($base, '/') . '/api/verify-payments', ['pp_id' => (int) $argv[4]], $auth));
}
