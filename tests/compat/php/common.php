<?php
// What every plugin does: POST JSON with its key header through php-curl, decode the answer.

function post_json(string $url, array $body, array $headers): array
{
    $ch = curl_init($url);
    curl_setopt_array($ch, [
        CURLOPT_POST => true,
        CURLOPT_POSTFIELDS => json_encode($body),
        CURLOPT_RETURNTRANSFER => true,
        CURLOPT_HTTPHEADER => array_merge(['Content-Type: application/json', 'Accept: application/json'], $headers),
        CURLOPT_TIMEOUT => 20,
    ]);
    $raw = curl_exec($ch);
    if ($raw === false) {
        fwrite(STDERR, 'curl: ' . curl_error($ch) . "\n");
        exit(2);
    }
    $status = curl_getinfo($ch, CURLINFO_HTTP_CODE);
    curl_close($ch);
    return ['http' => $status, 'body' => json_decode($raw, true)];
}

// An IPN handler as the plugins write it: the header looked up case-sensitively in getallheaders().
function ipn_headers(): array
{
    return function_exists('getallheaders') ? getallheaders() : [];
}

function log_ipn(array $entry): void
{
    file_put_contents(getenv('IPN_LOG'), json_encode($entry) . "\n", FILE_APPEND | LOCK_EX);
}

function answer(array $result): void
{
    echo json_encode($result), "\n";
}
