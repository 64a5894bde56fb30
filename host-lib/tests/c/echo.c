/* Echo over two simulated cards, from C: card 0 sends requests of 1, 1424,
 * 1425 and 40 000 bytes to an echo server on card 1 and checks each response
 * byte for byte (polling with the try calls, or blocking); also checks a few
 * error codes. Exit status 0 on success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "homa_nic.h"

#define CHECK(call)                                                            \
    do {                                                                       \
        int32_t rc_ = (call);                                                  \
        if (rc_ != HOMA_OK) {                                                  \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,      \
                    homa_strerror(rc_));                                       \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#define MAX_WAITS 100000

int main(void) {
    static uint8_t request[HOMA_MAX_MESSAGE_BYTES + 1];
    static uint8_t buf[HOMA_MAX_MESSAGE_BYTES];
    const uint8_t client_mac[6] = {2, 0, 0, 0, 0, 1};
    const uint8_t server_mac[6] = {2, 0, 0, 0, 0, 2};
    const size_t sizes[] = {1, 1424, 1425, HOMA_MAX_MESSAGE_BYTES};

    HomaSimNetwork *net = homa_sim_network_new(2);
    if (!net) return 1;
    HomaNic *client_nic, *server_nic;
    HomaEndpoint *client, *server;
    CHECK(homa_nic_open_sim(net, 0, &client_nic));
    CHECK(homa_nic_open_sim(net, 1, &server_nic));
    CHECK(homa_nic_set_address(client_nic, client_mac, 0x0a000001));
    CHECK(homa_nic_set_address(server_nic, server_mac, 0x0a000002));
    CHECK(homa_endpoint_open(client_nic, 1000, &client));
    CHECK(homa_endpoint_open(server_nic, 99, &server));

    HomaPeer to_server = {.ip = 0x0a000002, .port = 99};
    memcpy(to_server.mac, server_mac, 6);
    uint64_t id;
    if (homa_send_request(client, &to_server, request, HOMA_MAX_MESSAGE_BYTES + 1, &id) !=
        HOMA_ERR_MESSAGE_TOO_LONG) {
        fprintf(stderr, "40 001 bytes were not refused\n");
        return 1;
    }
    if (homa_reply(server, 12345, request, 1) != HOMA_ERR_NO_SUCH_RPC) {
        fprintf(stderr, "a reply to no RPC was not refused\n");
        return 1;
    }

    for (size_t n = 0; n < sizeof sizes / sizeof sizes[0]; n++) {
        size_t len = sizes[n];
        for (size_t i = 0; i < len; i++) request[i] = (uint8_t)(i * 7 + n);
        CHECK(homa_send_request(client, &to_server, request, len, &id));

        /* Server: wait for the request, echo it. */
        size_t got = 0;
        uint64_t server_id;
        HomaPeer from;
        int waits = 0, rc;
        while ((rc = homa_try_recv_request(server, buf, sizeof buf, &got, &server_id, &from)) ==
               HOMA_AGAIN) {
            if (++waits > MAX_WAITS) { fprintf(stderr, "no request\n"); return 1; }
            homa_nic_wait(server_nic);
        }
        CHECK(rc);
        if (got != len || server_id != (id ^ 1) || from.port != 1000 || from.ip != 0x0a000001 ||
            memcmp(from.mac, client_mac, 6) != 0) {
            fprintf(stderr, "request %zu: len %zu id %llu port %u\n", len, got,
                    (unsigned long long)server_id, from.port);
            return 1;
        }
        CHECK(homa_reply(server, server_id, buf, got));

        /* Client: wait for the response, compare. */
        memset(buf, 0, sizeof buf);
        if (n % 2 == 0) {
            waits = 0;
            while ((rc = homa_try_recv_response(client, id, buf, sizeof buf, &got)) ==
                   HOMA_AGAIN) {
                if (++waits > MAX_WAITS) { fprintf(stderr, "no response\n"); return 1; }
                homa_nic_wait(client_nic);
            }
            CHECK(rc);
        } else {
            /* Blocking, with a buffer too small: refused with the length once
             * the response is in, and the response kept for the next call. */
            rc = homa_recv_response(client, id, buf, 0, &got);
            if (rc != HOMA_ERR_BUFFER_TOO_SMALL || got != len) {
                fprintf(stderr, "too-small buffer: %s, length %zu not %zu\n", homa_strerror(rc),
                        got, len);
                return 1;
            }
            CHECK(homa_try_recv_response(client, id, buf, sizeof buf, &got));
        }
        if (got != len || memcmp(buf, request, len) != 0) {
            fprintf(stderr, "response of %zu bytes differs\n", len);
            return 1;
        }
        printf("echo of %zu bytes ok at cycle %llu\n", len,
               (unsigned long long)homa_sim_network_cycle(net));
    }
    homa_endpoint_close(client);
    homa_endpoint_close(server);
    homa_nic_close(client_nic);
    homa_nic_close(server_nic);
    homa_sim_network_free(net);
    return 0;
}
