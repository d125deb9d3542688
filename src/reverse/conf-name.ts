/** The config file of reverse mode, in the plaintext directory (gocryptfs's .gocryptfs.reverse.conf). */
export const REVERSE_CONF_NAME = '.gocryptfs.reverse.conf';
